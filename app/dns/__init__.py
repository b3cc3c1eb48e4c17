"""The thin DNS wire layer: bytes in, domain answer, bytes out."""
