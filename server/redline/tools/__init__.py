"""The model's hands: read_file, write_file, git, gh, read_function, search_callers,
git_show_previous — each bounded by code, never by the prompt (see docs on security).

    ctx = ToolContext(repo_root, runner=GitRunner(), old_rev=review.old_rev)
    registry = build_tool_registry(ctx)        # for redline.agent.Agent
"""

from redline.tools.code_tools import git_show_previous, read_function, search_callers
from redline.tools.gh_tool import run_gh_tool
from redline.tools.git_tool import run_git_tool
from redline.tools.read_file import read_file
from redline.tools.registry import READ_ONLY_TOOLS, TOOL_NAMES, build_tool_registry, build_tools
from redline.tools.sandbox import ToolContext, ToolLimits, default_report_dir
from redline.tools.write_file import write_file

__all__ = [
    "READ_ONLY_TOOLS",
    "TOOL_NAMES",
    "ToolContext",
    "ToolLimits",
    "build_tool_registry",
    "build_tools",
    "default_report_dir",
    "git_show_previous",
    "read_file",
    "read_function",
    "run_gh_tool",
    "run_git_tool",
    "search_callers",
    "write_file",
]
