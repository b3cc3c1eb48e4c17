"""The admin REST API: thin handlers over the store (DESIGN §6)."""
