"""MuJoCo locomotion envs, registered as env type 'mujoco'."""
