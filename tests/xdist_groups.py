"""Make `@pytest.mark.xdist_group` group again under `--dist loadgroup` (a pytest plugin).

pytest-xdist 3.8 names a test's group by setting `item._nodeid` to "<id>@<group>", which
pytest 9 no longer reads (a node's id is `item._id`): every grouped test (the shared
PostgreSQL server's, the pre-commit hook's) was scheduled on any worker. This hook runs after
xdist's own and moves its suffix into the id the scheduler reads. conftest.py loads it;
tests/test_xdist_groups.py checks the grouping in a real two-worker run.
"""

from __future__ import annotations

import pytest
from _pytest.nodeid import NodeId


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        grouped = item.__dict__.get("_nodeid")
        if isinstance(grouped, str) and grouped != item.nodeid:
            item._id = NodeId.parse(grouped)
