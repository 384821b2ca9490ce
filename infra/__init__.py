"""Deployment infrastructure: the template parts `make package` merges, and the tools that check them."""
