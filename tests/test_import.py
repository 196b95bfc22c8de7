import subprocess
import sys


def test_import_is_light():
    code = (
        "import sys, ding_env\n"
        "heavy = ('torch', 'ale_py', 'mujoco', 'dizoo', 'multiprocessing.shared_memory')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_public_names_exist_and_are_documented():
    import ding_env

    names = [
        "BaseEnv",
        "BaseEnvTimestep",
        "DingEnvWrapper",
        "BaseEnvManager",
        "SyncSubprocessEnvManager",
        "AsyncSubprocessEnvManager",
        "create_env_manager",
        "get_vec_env_setting",
        "get_env_cls",
        "ENV_REGISTRY",
    ]
    for name in names:
        obj = getattr(ding_env, name)
        if name != "ENV_REGISTRY":
            assert obj.__doc__, name
