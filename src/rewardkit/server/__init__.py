"""The reward server (HTTP) and its metrics."""
