"""Who is calling: users by OIDC bearer token, hosts/workers/operators by their IAM identity."""
