"""A Blackjack-inspired card game: the model to copy for a custom ``BaseEnv``."""
