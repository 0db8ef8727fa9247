"""Readers for every shipped data format; each is the real reader of the official file format."""
