"""Storage adapters: one repository per DynamoDB table, speaking dataclasses, never raw items."""
