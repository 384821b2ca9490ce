"""Pieces of the one-machine stack (`make run`): never packaged into the Lambda functions."""
