"""The `bench` commands, one module per group; `reasonaudio/cli.py` assembles them."""
