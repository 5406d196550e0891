"""The documentation: the README's first lines, the pages made from the code (the settings table, the
commands), the MkDocs hook that puts them in the site and keeps it offline, and the GitHub Action the
CI docs point to. `mkdocs build --strict` itself runs in .ci/run."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import yaml

from syndicator.config.readers import TAKES
from syndicator.config.reference import settings_table, shown_default
from syndicator.config.settings import SETTINGS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_the_readme_starts_with_the_two_commands() -> None:
    """The first code block of README.md: one line installs and builds the demo, one installs and tests."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    assert readme.startswith("# syndicator\n\n```sh\n")
    assert first.splitlines() == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/syndicator build --config "
        "examples/demo/sites.yaml",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest",
    ]


def test_every_setting_says_what_it_means_and_takes() -> None:
    for setting in SETTINGS.values():
        assert setting.means.strip() and "\n" not in setting.means, setting.name
        assert TAKES.get(setting.read), f"the reader of {setting.name} does not say what it takes"


def test_the_settings_table_has_a_row_per_setting_with_its_default() -> None:
    rows = [line for line in settings_table().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(SETTINGS)
    for row, setting in zip(rows, SETTINGS.values(), strict=True):
        assert f"| {shown_default(setting)} |" in row and setting.means in row, row
    by_name = dict(zip(SETTINGS, rows, strict=True))
    assert "| 4 days | a duration from 1 minute to 365 days |" in by_name["stale_after"]
    assert "| `8` | a whole number from 1 to 64 |" in by_name["workers"]
    assert "| `false` | `true` or `false` |" in by_name["snapshot"]
    assert "| `public` |" in by_name["output"] and "| none |" in by_name["hub"]


def load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hook", DOCS / "hooks" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(path: str) -> SimpleNamespace:
    """The little of a MkDocs page the hook reads: its source path."""
    return SimpleNamespace(file=SimpleNamespace(src_path=path))


def test_the_hook_fills_each_generated_block_of_the_pages() -> None:
    hook = load_hook()
    for path, made in (("reference/settings.md", "| `workers` |"), ("reference/commands.md", "## `syndicator build`")):
        text = (DOCS / path).read_text(encoding="utf-8")
        assert made not in text  # nothing generated is committed
        built = hook.on_page_markdown(text, page=page(path), config=None, files=None)
        assert made in built and "<!-- generated:" not in built and "filled in when" not in built
        before, after = text.split("<!-- generated:")[0], text.split("<!-- end generated -->\n")[1]
        assert built.startswith(before) and built.endswith(after)  # the prose around it is kept


def test_the_hook_refuses_a_generator_it_does_not_know() -> None:
    text = "# A page\n\n<!-- generated: nonsense -->\nsoon\n<!-- end generated -->\n"
    with pytest.raises(ValueError, match=r"a\.md: no generator named 'nonsense'"):
        load_hook().on_page_markdown(text, page=page("a.md"), config=None, files=None)


def test_every_generated_block_in_the_docs_names_a_known_generator() -> None:
    known = set(load_hook().GENERATORS)
    found = {name for path in DOCS.rglob("*.md") for name in re.findall(r"<!-- generated: (\w+) -->", path.read_text())}
    assert found == known


def test_the_docs_build_offline_and_run_the_hook() -> None:
    """No plugin that fetches at build time, and no Google fonts; the hook is the one generating the pages."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["name"] == "material" and config["theme"]["font"] is False
    assert config["plugins"] == ["search"]
    assert config["hooks"] == ["docs/hooks/generate.py"] and config["strict"] is True


def test_the_action_installs_syndicator_from_its_own_checkout(tmp_path: Path) -> None:
    """action.yml's install step, run by bash as GitHub runs it, with a stand-in `python` that prints what
    it was asked: it installs the Action's own folder, with the extras asked for."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    (step,) = [step for step in action["runs"]["steps"] if "run" in step]
    assert step["shell"] == "bash" and step["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert "${{" not in step["run"]  # inputs reach the script as variables only
    stand_in = tmp_path / "bin" / "python"
    stand_in.parent.mkdir()
    stand_in.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    stand_in.chmod(0o755)
    for extras, target in (("", "/actions/syndicator"), ("postgres", "/actions/syndicator[postgres]")):
        env = {**os.environ, "PATH": f"{stand_in.parent}:{os.environ['PATH']}"}
        env |= {"ACTION_PATH": "/actions/syndicator", "EXTRAS": extras}
        done = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True, check=True)
        assert done.stdout.splitlines() == ["-m", "pip", "install", target]
