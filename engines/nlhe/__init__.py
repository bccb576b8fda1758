"""Heads-up no-limit hold'em: the batched table engine, plane encoding and the CNN player."""
