"""Personal memory: the domain, storage and services behind the Chalice routes in app.py."""
