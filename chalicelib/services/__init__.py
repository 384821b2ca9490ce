"""Services: the use cases of each caller, plain functions over the repositories, with no Chalice import."""
