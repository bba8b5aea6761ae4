"""Glued values read back from executed notebooks (fgpo_lib.study.glued), on hand-made notebooks."""

import json

from fgpo_lib.study.glued import compare, glued_values, lost_rows, main, table_rows


def _book(tmp_path, name, values):
    d = tmp_path / name / "_generated"
    d.mkdir(parents=True)
    # myst-nb's glue(..., display=False) keeps the value under a papermill record prefix; a displayed one under its mime
    outputs = [{"output_type": "display_data", "data": {("application/papermill.record/" if i % 2 else "") + "text/plain": [repr(v)]},
                "metadata": {"scrapbook": {"name": k, "mime_prefix": "application/papermill.record/" if i % 2 else ""}}} for i, (k, v) in enumerate(values.items())]
    outputs.append({"output_type": "stream", "name": "stdout", "text": "not glued"})
    (d / "protocol.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": outputs}]}))
    return tmp_path / name


def test_glued_values_and_their_comparison(tmp_path, capsys):
    a = _book(tmp_path, "a", {"diff": 1.25, "n": 3})
    b = _book(tmp_path, "b", {"diff": 1.2500001, "n": 3, "new": "x"})
    assert glued_values(a) == {"_generated/protocol:diff": "1.25", "_generated/protocol:n": "3"}
    c = compare(glued_values(a), glued_values(b))
    assert c["same"] == 1 and c["changed"] == {"_generated/protocol:diff": ("1.25", "1.2500001")} and c["only_after"] == ["_generated/protocol:new"]
    assert main([str(a), str(b)]) == 1 and "1 differ" in capsys.readouterr().out
    assert main([str(a), str(a)]) == 0
    assert main([str(a), str(tmp_path)]) in (0, 1)  # tmp_path holds both books: a superset, read recursively
    assert main([str(a), str(tmp_path / "missing")]) == 2


def _table_page(tmp_path, name, rows):
    d = tmp_path / name / "_generated"
    d.mkdir(parents=True)
    html = "<table><tr><th>arm</th><th>score</th></tr>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows) + "</table>"
    (d / "setting.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": [{"output_type": "execute_result", "data": {"text/html": [html]}}]}]}))
    return tmp_path / name


def test_table_rows_compare_numbers_as_numbers_and_keep_rows_that_gained_columns(tmp_path, capsys):
    a = _table_page(tmp_path, "a", [("FGPO", "100.0", "NaN"), ("GRPO", "73.4")])
    b = _table_page(tmp_path, "b", [("FGPO", "100.00", "NaN"), ("GRPO", "73.4", "3.84"), ("TPO", "70.0")])  # one column more, one arm more
    ra, rb = table_rows(a), table_rows(b)
    assert ("FGPO", 100.0, "nan") in ra["_generated/setting"] and ("arm", "score") in ra["_generated/setting"]
    assert lost_rows(ra, rb) == {}
    c = _table_page(tmp_path, "c", [("FGPO", "99.9", "NaN"), ("GRPO", "73.4")])
    assert lost_rows(ra, table_rows(c)) == {"_generated/setting": [("FGPO", 100.0, "nan")]}
    assert main([str(a), str(c)]) == 1 and "lost row of _generated/setting: ('FGPO', 100.0, 'nan')" in capsys.readouterr().out
