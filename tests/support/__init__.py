"""Real parts for the tests: a PostgreSQL server, free ports, a running tmdns."""
