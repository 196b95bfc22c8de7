"""Packaging for ding-env; the version is read from ding_env/version.py without importing the package."""

import re
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
VERSION = re.search(r'__version__ = "([^"]+)"', (HERE / "ding_env" / "version.py").read_text()).group(1)

# Episode replays (`ding-env run --replay DIR`, enable_save_replay) are MP4s written by imageio's ffmpeg plugin.
REPLAY = ["imageio>=2.30", "imageio-ffmpeg>=0.4"]
EXTRAS = {
    "replay": REPLAY,
    "atari": ["ale-py>=0.11", "opencv-python-headless>=4.8", *REPLAY],
    "mujoco": ["mujoco>=3.0", *REPLAY],
    # Gymnasium's LunarLander and BipedalWalker; box2d 2.3.10 ships wheels (box2d-py needs a compiler and SWIG).
    "box2d": ["box2d>=2.3.10"],
    "minigrid": ["minigrid>=2.3"],
    "torch": ["torch>=2.0"],
    # ding_env.sb3: a Stable-Baselines3 VecEnv over the managers.
    "sb3": ["stable-baselines3>=2.3", "torch>=2.0"],
    # dizoo's PettingZoo env types (MPE through the mpe2 package).
    "pettingzoo": ["pettingzoo>=1.24", "mpe2>=0.0.1"],
    # BaseEnvManagerV2 / SubprocessEnvManagerV2 return treetensor arrays (DI-treetensor imports torch).
    "treetensor": ["DI-treetensor>=0.4"],
    # `ding-env serve` and the remote manager: envs on other machines over ZeroMQ, typed msgpack headers.
    "zmq": ["pyzmq>=26", "msgspec>=0.19"],
    # EnvPool's C++ env pools (Atari, MuJoCo, classic control) as batch envs: ding_env.env.batch_sources.
    "envpool": ["envpool>=1.2"],
    # The Ray managers: hosts placed on a cluster by Ray, stepped over the env servers' ZeroMQ wire.
    "ray": ["ray>=2.40", "pyzmq>=26", "msgspec>=0.19"],
    "test": ["pytest>=8", "pytest-timeout>=2.3", "cloudpickle>=2.0"],
    # PufferLib (pufferlib-core) is a bench peer too, installed with --no-deps by `make bench`: it pins another torch.
    "bench": ["matplotlib>=3.7", "stable-baselines3>=2.3", "envpool>=1.2", "psutil>=5.9"],
    # `make docs`: the site in docs/ and its API reference from the docstrings.
    "docs": ["mkdocs>=1.6", "mkdocs-material>=9.5", "mkdocstrings>=1.0", "mkdocstrings-python>=2.0"],
    "dev": ["ruff>=0.6"],
}
EXTRAS["all"] = sorted({requirement for requirements in EXTRAS.values() for requirement in requirements})

setup(
    name="ding-env",
    version=VERSION,
    description="DI-engine-style RL environments and fast shared-memory env managers",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    # The packages sit at the project root, and saying so makes an editable install (`make`) one .pth entry
    # for the root: without it setuptools installs an import hook and warns about it on every install.
    package_dir={"": "."},
    packages=find_packages(include=["ding_env", "ding_env.*", "dizoo", "dizoo.*"]),
    # tqdm (pure Python, no dependencies) draws `ding-env run`'s progress bars; imported only by the CLI.
    install_requires=["numpy>=1.24", "gymnasium>=1.0", "easydict>=1.10", "tqdm>=4.60"],
    extras_require=EXTRAS,
    entry_points={
        "console_scripts": ["ding-env=ding_env.cli:main"],
        "ding_env.envs": [
            "cartpole=dizoo.classic_control.cartpole.envs.cartpole_env:CartPoleEnv",
            "pendulum=dizoo.classic_control.pendulum.envs.pendulum_env:PendulumEnv",
            "mountain_car=dizoo.classic_control.mountain_car.envs.mountain_car_env:MountainCarEnv",
            "acrobot=dizoo.classic_control.acrobot.envs.acrobot_env:AcrobotEnv",
            "card_game=dizoo.card_game.envs.card_game_env:CardGameEnv",
            "atari=dizoo.atari.envs.atari_env:AtariEnv",
            "mujoco=dizoo.mujoco.envs.mujoco_env:MujocoEnv",
            "lunarlander=dizoo.box2d.lunarlander.envs.lunarlander_env:LunarLanderEnv",
            "bipedalwalker=dizoo.box2d.bipedalwalker.envs.bipedalwalker_env:BipedalWalkerEnv",
            "minigrid=dizoo.minigrid.envs.minigrid_env:MiniGridEnv",
            "gym_hybrid=dizoo.gym_hybrid.envs.moving_env:GymHybridEnv",
            "petting_zoo=dizoo.petting_zoo.envs.simple_spread_env:SimpleSpreadEnv",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
