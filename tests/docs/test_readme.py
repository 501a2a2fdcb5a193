"""The README's Python blocks run, in order, as a reader pasting them would run them."""

from __future__ import annotations

import re

from conftest import ROOT


def readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_python_blocks_run(tmp_path, monkeypatch, capsys):
    blocks = readme_python_blocks()
    assert blocks, "the README shows Python: a block that is not found is not tested"
    monkeypatch.chdir(tmp_path)  # anything a block writes lands here
    namespace: dict = {"__name__": "__readme__"}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"README.md python block {number}", "exec"), namespace)
    printed = capsys.readouterr().out
    # what the example's comments say it prints
    assert "(1, 1e-05)-DP, replace_one, unit: one stream element" in printed
    assert "(20000, 10)" in printed
