"""PettingZoo multi-agent env types (DI-engine's ``dizoo.petting_zoo``)."""
