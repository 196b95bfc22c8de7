"""The MountainCar-v0 env: module, registered type and config."""
