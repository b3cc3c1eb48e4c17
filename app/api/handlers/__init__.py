"""Request handlers, one module per resource; each handler is a few lines."""
