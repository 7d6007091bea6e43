"""What a newcomer meets first: docs/ has an index of every page, and the README and docs point
at nothing outside the repository."""

import os

from cluster_harness import SOURCE
from harness import run_tests


def test_docs_index_lists_every_page_and_nothing_points_outside():
    docs = os.path.join(SOURCE, "docs")
    with open(os.path.join(docs, "README.md")) as f:
        index = f.read()
    pages = sorted(n for n in os.listdir(docs) if n.endswith(".md") and n != "README.md")
    missing = [n for n in pages if f"]({n})" not in index]
    assert not missing, f"docs/README.md does not list {missing}"
    for path in [os.path.join(SOURCE, "README.md")] + [os.path.join(docs, n) for n in pages]:
        with open(path) as f:
            text = f.read()
        assert "../shared/" not in text, f"{path} points outside the repository"
    with open(os.path.join(SOURCE, "README.md")) as f:
        assert "docs/scenarios.md" in f.read()


if __name__ == "__main__":
    run_tests([test_docs_index_lists_every_page_and_nothing_points_outside])
