"""The Pendulum-v1 env: module, registered type and config."""
