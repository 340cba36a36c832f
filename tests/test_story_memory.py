"""The story memory (app/translate/memory.py): the model's proposals merged without touching
what the user set, a budget for the request, and the project file round trip."""
from dataclasses import replace

from app.core.project.files import load_project, save_project
from app.translate.memory import Character, StoryMemory, Term, memory_from_dict, memory_to_dict
from tests.translate_data import make_project


def test_proposals_are_merged_never_over_the_users_entries():
    mine = StoryMemory((Character("ユキ", "Yuki", "she, blunt", by_user=True), Character("タナカ", "Tanaka")),
                       summary="Yuki meets Tanaka.", summary_by_user=False)
    proposed = memory_from_dict({"characters": [{"source": "ユキ", "target": "Snow"},
                                                {"source": "タナカ", "target": "Tanaka-san", "notes": "he"},
                                                {"source": "ケン", "target": "Ken"}],
                                 "terms": [{"source": "魔法", "target": "magic"}],
                                 "summary": "Yuki and Tanaka go to school; Ken appears."}, by_user=False)
    merged = mine.merged(proposed)
    by = {c.source: c for c in merged.characters}
    assert by["ユキ"] == mine.characters[0]  # the user's entry stays as it was
    assert by["タナカ"].target == "Tanaka-san" and by["タナカ"].notes == "he"  # the model's own one is updated
    assert [c.source for c in merged.characters] == ["ユキ", "タナカ", "ケン"]
    assert merged.terms == (Term("魔法", "magic"),)
    assert merged.summary == "Yuki and Tanaka go to school; Ken appears."
    locked = replace(mine, summary_by_user=True).merged(proposed)
    assert locked.summary == "Yuki meets Tanaka."


def test_the_request_gets_the_names_on_the_page_first_within_its_budget():
    memory = StoryMemory(tuple(Character(f"人{i:02d}", f"Person {i}", "x" * 40) for i in range(50)),
                         summary="s" * 5000)
    sent = memory.for_prompt(["人42が来た"], budget_chars=600)
    assert sent["characters"][0]["source"] == "人42"
    assert 1 < len(sent["characters"]) < 50 and len(sent["summary"]) <= 1200


def test_memory_is_saved_with_the_project(tmp_path):
    project = make_project(str(tmp_path))
    project.memory = StoryMemory((Character("ユキ", "Yuki", by_user=True),), (Term("魔法", "magic"),), "So far.")
    path = save_project(project)
    again = load_project(path)
    assert again.memory == project.memory
    assert memory_from_dict(memory_to_dict(project.memory)) == project.memory
    assert memory_from_dict({"characters": [{"source": 3}, "x", {"source": " "}], "summary": 5}) == StoryMemory()
