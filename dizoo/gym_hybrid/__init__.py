"""Hybrid-action env types (DI-engine's ``dizoo.gym_hybrid``)."""
