"""Per-user encryption of stored text: data keys from KMS, cached per container, AES-256-GCM sealing."""
