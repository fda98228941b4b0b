"""Agent core: the LLM client (litellm, imported lazily), tools, sessions and the agent loop.

Generic on purpose — no review logic here. Importing this package must stay cheap: litellm
is loaded on the first model call, never at import.
"""

from redline.agent.llm import (
    BudgetExceeded,
    LLMClient,
    LLMError,
    LLMNotConfigured,
    LLMResponse,
    LLMTimeout,
    LLMTruncated,
    RequestCapReached,
    ToolCall,
)
from redline.agent.loop import Agent, AgentResult
from redline.agent.redact import redact, redact_messages
from redline.agent.session import Session
from redline.agent.toolkit import Tool, ToolError, ToolExecutor, ToolRegistry, ToolResult
from redline.agent.usage import CallRecord, Usage, UsageLedger

__all__ = [
    "Agent",
    "AgentResult",
    "BudgetExceeded",
    "CallRecord",
    "LLMClient",
    "LLMError",
    "LLMNotConfigured",
    "LLMResponse",
    "LLMTimeout",
    "LLMTruncated",
    "RequestCapReached",
    "Session",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolExecutor",
    "ToolRegistry",
    "ToolResult",
    "Usage",
    "UsageLedger",
    "redact",
    "redact_messages",
]
