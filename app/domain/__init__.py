"""Pure core: configuration values, routing, answers. Standard library only, no I/O."""
