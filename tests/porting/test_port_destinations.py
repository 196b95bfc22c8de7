"""`ding-env port`: where a port and its report go, from relative paths too, and never over another port's."""

from __future__ import annotations

from pathlib import Path

from tests.porting.test_port import BROKEN_PACKAGE, ding_env_port, port_json

# BROKEN_PACKAGE's env with the observation it declares, and a size of its own when the config gives none.
WALK_ENV = BROKEN_PACKAGE["walk_env.py"].replace("np.float64", "np.float32").replace("cfg.size", "cfg.get('size', 3)")


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _ran(report: dict, env_type: str = "porting_walk") -> dict:
    assert "error" not in report["trial"], report["trial"]  # the trial itself ran
    (env,) = [env for env in report["trial"]["envs"] if env["type"] == env_type]
    return env


def test_try_runs_with_relative_paths_for_a_file_in_place_and_a_folder_of_packages(tmp_path):
    _write(tmp_path, {"edge/walk.py": WALK_ENV, "ip/walk.py": WALK_ENV})
    code, report = port_json("edge/walk.py", "--out", "p_single/walk.py", "--try", "--steps", "6", cwd=tmp_path)
    assert code == 0 and _ran(report)["base"]["steps"] == 6, report["failures"]
    assert (tmp_path / "p_single" / "walk.PORTING.md").is_file()
    code, report = port_json("walk.py", "--in-place", "--try", "--steps", "6", cwd=tmp_path / "ip")
    assert code == 0 and _ran(report)["subprocess"]["steps"] == 6, report["failures"]
    # README's `ding-env port my_envs/ --out ported/my_envs --fix --try`, my_envs/ a folder of packages.
    _write(tmp_path / "my_envs", {f"walk_pkg/{name}": text for name, text in BROKEN_PACKAGE.items()})
    _write(tmp_path / "my_envs", {"walk_pkg/walk_env.py": WALK_ENV})
    code, report = port_json("my_envs/", "--out", "ported/my_envs", "--fix", "--try", "--steps", "6", cwd=tmp_path)
    env = _ran(report)
    assert code == 0 and env["config"] == "walk_pkg/config/walk_config.py" and env["base"]["steps"] == 6


def test_an_empty_folder_is_refused_and_no_report_is_written_outside_dst(tmp_path):
    (tmp_path / "edge" / "empty" / "__pycache__").mkdir(parents=True)  # caches are not ported
    (tmp_path / "edge" / "empty" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (tmp_path / "work").mkdir()
    (tmp_path / "PORTING.md").write_text("a report of mine\n")
    done = ding_env_port("../edge/empty", "--out", "../edge_out4", cwd=tmp_path / "work")
    assert done.returncode == 2 and b"holds no files: nothing to port" in done.stderr
    assert (tmp_path / "PORTING.md").read_text() == "a report of mine\n" and not (tmp_path / "edge_out4").exists()
    # A folder of data files alone is ported, with its report inside DST.
    (tmp_path / "edge" / "data").mkdir()
    (tmp_path / "edge" / "data" / "table.csv").write_text("a,b\n")
    assert ding_env_port("../edge/data", "--out", "../data_out", cwd=tmp_path / "work").returncode == 0
    assert sorted(path.name for path in (tmp_path / "data_out").iterdir()) == ["PORTING.md", "table.csv"]


def test_a_port_never_mixes_with_another_port_nor_overwrites_a_report(tmp_path):
    _write(tmp_path, {"a/a_env.py": "x = 1\n", "b/b_env.py": "y = 1\n", "c.py": "z = 1\n"})
    assert ding_env_port("a", "--out", "out", cwd=tmp_path).returncode == 0
    report_of_a = (tmp_path / "out" / "PORTING.md").read_text()
    mixed = ding_env_port("b", "--out", "out", cwd=tmp_path)
    assert mixed.returncode == 2 and b"holds the port of" in mixed.stderr and b"would mix the two ports" in mixed.stderr
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["PORTING.md", "a_env.py"]
    assert (tmp_path / "out" / "PORTING.md").read_text() == report_of_a
    # Porting the same SRC again replaces its own port, and says which files of it SRC no longer has.
    (tmp_path / "a" / "a_env.py").rename(tmp_path / "a" / "renamed_env.py")
    again = ding_env_port("a", "--out", "out", cwd=tmp_path)
    assert again.returncode == 0 and b"earlier port of this SRC" in again.stderr and b"a_env.py" in again.stderr
    # Several files into one folder: a report each, and no file of another port or of the user's overwritten.
    for name in ("b/b_env.py", "c.py"):
        assert ding_env_port(name, "--out", f"one/{Path(name).name}", cwd=tmp_path).returncode == 0
    assert sorted(path.name for path in (tmp_path / "one").iterdir()) == [
        "b_env.PORTING.md",
        "b_env.py",
        "c.PORTING.md",
        "c.py",
    ]
    assert "b/b_env.py` ->" in (tmp_path / "one" / "b_env.PORTING.md").read_text()
    over = ding_env_port("c.py", "--out", "one/b_env.py", cwd=tmp_path)
    assert over.returncode == 2 and b"would overwrite it and its report" in over.stderr
    (tmp_path / "one" / "mine.py").write_text("keep me\n")
    mine = ding_env_port("c.py", "--out", "one/mine.py", cwd=tmp_path)
    assert mine.returncode == 2 and b"no port wrote it" in mine.stderr
    assert (tmp_path / "one" / "mine.py").read_text() == "keep me\n"
    # In place, a PORTING.md that is not a port's report stays.
    (tmp_path / "a" / "PORTING.md").write_text("my notes\n")
    in_place = ding_env_port("a", "--in-place", cwd=tmp_path)
    assert in_place.returncode == 2 and b"is not a port's report" in in_place.stderr
    assert (tmp_path / "a" / "PORTING.md").read_text() == "my notes\n"


def test_porting_again_over_a_port_edited_since_is_refused_unless_forced(tmp_path):
    """The documented loop is port, then fix what the report lists: porting again silently threw the fixes away."""
    from ding_env.porting.tool import port

    _write(tmp_path, {"a/a_env.py": "x = 1\n", "a/b_env.py": "y = 1\n"})
    assert ding_env_port("a", "--out", "out", cwd=tmp_path).returncode == 0
    port(tmp_path / "a", tmp_path / "out")  # files written again, unchanged, with no report: not an edit
    assert ding_env_port("a", "--out", "out", cwd=tmp_path).returncode == 0
    fixed = tmp_path / "out" / "a_env.py"
    fixed.write_text("x = 2  # my fix\n")
    again = ding_env_port("a", "--out", "out", cwd=tmp_path)
    assert again.returncode == 2 and b"edited since (a_env.py)" in again.stderr
    assert b"--in-place --try" in again.stderr and b"--force" in again.stderr
    assert fixed.read_text() == "x = 2  # my fix\n"
    # What the message offers: trying the edited port as it is, then replacing it on purpose.
    assert ding_env_port("out", "--in-place", cwd=tmp_path).returncode == 0
    assert fixed.read_text() == "x = 2  # my fix\n"
    forced = ding_env_port("a", "--out", "out", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and fixed.read_text() == "x = 1\n"


def test_an_in_place_port_again_neither_counts_nor_rewrites_its_own_report(tmp_path):
    """The second in-place port counted its PORTING.md as a ported file: "2 (1 Python)"."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "my_env.py").write_text("from ding.envs import BaseEnv\n")
    (tmp_path / "pkg" / "notes.PORTING.md").write_text("my notes, not a report\n")  # the user's: ported
    for _ in range(2):
        _, report = port_json("pkg", "--in-place", cwd=tmp_path)
        assert report["files"] == ["my_env.py", "notes.PORTING.md"]
    text = (tmp_path / "pkg" / "PORTING.md").read_text()
    assert "| files | 2 (1 Python) |" in text and '"PORTING.md"' not in text
