"""Training entry points for CartPole."""
