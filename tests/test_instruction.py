"""What the agent reads about grading is rendered from the ladder's own data."""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path

from recon import Registry
from recon.build import build_task
from recon.checks import CHECKS
from recon.instruction import render_instruction
from recon.ladder import Quorum, load_ladder

TINY = Path(__file__).parent / "fixtures" / "tiny" / "tiny.py"


def test_the_instruction_describes_the_ladder_the_grader_uses(tmp_path: Path) -> None:
    reg = Registry.default(entry_points=False)
    reg.load_plugin_file(TINY)
    task = build_task(reg, "tiny_series", tmp_path, n_public=3, n_hidden=2, select="random").path
    text = (task / "instruction.md").read_text()
    ladder = load_ladder("six_rung")
    for rung in ladder.rungs:
        assert f"{rung.index}. **{rung.name}** ({rung.index}/6): {' '.join(rung.description.split())}" in text
    tracks = ladder.rungs[4]
    assert CHECKS["tracks"].explain_for(tracks.options_for("tracks")) in text
    assert "A grading runs your program on at most 100 of the published scenarios" in text
    assert "at most the larger of 1 and 1/4 of its checks (rounded down) fail" in text
    # the old, hard-coded description of rung 5 is gone
    assert "every field that varies in the truth varies" not in text


def test_changing_the_ladder_changes_the_instruction() -> None:
    ladder = load_ladder("six_rung")
    r5 = ladder.rungs[4]
    stricter = replace(ladder, rungs=(*ladder.rungs[:4],
                                      replace(r5, quorum=Quorum(Fraction(1, 5), 2),
                                              options={"tracks": {"win_share": "3/4", "unpredictable_win_share": "2/3"}}),
                                      ladder.rungs[5]))
    manifest = {"title": "T", "description": "d", "domain": "x", "toolkit": [], "axes": {}, "outputs": {},
                "inputs": False, "evidence": {}, "oracle": "t", "timeout": 30.0}
    a = render_instruction(manifest, n_public=3, probes=2, ladder=ladder)
    b = render_instruction(manifest, n_public=3, probes=2, ladder=stricter)
    assert "at least 2/3 of the graded scenarios" in a and "at least 3/4 of the graded scenarios" in b
    assert "the larger of 2 and 1/5 of its checks" in b
    # without `at_most`, rung 3 runs every public scenario and says nothing more
    every = replace(ladder, rungs=(*ladder.rungs[:2], replace(ladder.rungs[2], options={}), *ladder.rungs[3:]))
    assert every.public_runs(747) == 747 and ladder.public_runs(747) == 100 and ladder.public_runs(16) == 16
    c = render_instruction(manifest, n_public=3, probes=2, ladder=every)
    assert "at most 100 of the published" in a and "of the published scenarios, spread" not in c
