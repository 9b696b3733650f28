"""readbox as a toolset for Google's Agent Development Kit (`pip install 'readbox-tools[adk]'`).

    from readbox.adk import ReadboxToolset
    files = ReadboxToolset(working_directory="/repo", allowed_tools=["cat", "grep", "ls"])
    agent = LlmAgent(model="gemini-2.5-flash", name="reader", tools=[files])

`ReadboxToolset` takes the constructor arguments of ADK's `BashToolset` (plus `redact` and
`respect_ignore_files`, and `BaseToolset`'s `tool_filter` and `tool_name_prefix`). `get_tools()`
gives one tool per enabled tool, the shell `sh` included, declared from `readbox schema`; each
tool's result is the envelope dict. The toolset also has the async methods of `BashToolset`
(`await files.cat("README.md")`, `await files.grep("TODO", "src")`). Every call is a child
process of the installed binary; the event loop goes on while it runs, and a cancelled call has
its child killed.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset, ToolPredicate
from google.genai import types

from . import (
    Policy,
    ReadboxError,
    _definition,
    _document,
    run_argv,
    run_argv_async,
    run_async,
    schema_tools,
)

__all__ = ["ReadboxTool", "ReadboxToolset"]


class ReadboxTool(BaseTool):
    """One readbox tool for an agent: its declaration is the tool's entry in `readbox schema`;
    running it is `readbox call TOOL JSON` under the toolset's policy. A prefixed copy (ADK's
    `tool_name_prefix`) keeps calling readbox by the tool's own name."""

    def __init__(self, toolset: ReadboxToolset, definition: dict[str, Any]):
        super().__init__(name=definition["name"], description=definition["description"])
        self.readbox_name: str = definition["name"]
        self.input_schema: dict[str, Any] = definition["input_schema"]
        self._toolset = toolset

    def _get_declaration(self) -> types.FunctionDeclaration:
        # As ADK's McpTool declares a JSON schema: as it is when ADK is set to send JSON schemas,
        # else through ADK's own conversion to a Gemini Schema (which keeps descriptions, enums,
        # ranges and defaults, and drops additionalProperties). A tool without parameters (pwd)
        # declares none: Gemini refuses an OBJECT with no properties.
        if not self.input_schema.get("properties"):
            return types.FunctionDeclaration(name=self.name, description=self.description)
        if _json_schema_declarations():
            return types.FunctionDeclaration(
                name=self.name,
                description=self.description,
                parameters_json_schema=self.input_schema,
            )
        from google.adk.tools._gemini_schema_util import _to_gemini_schema

        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters=_to_gemini_schema(self.input_schema),
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> dict[str, Any]:
        return await self._toolset._call(self.readbox_name, args)


class ReadboxToolset(BaseToolset):
    """The readbox tools under one policy, for an ADK agent.

    The arguments are `BashToolset`'s: `working_directory` (default: the current directory when
    the toolset is made), `allowed_directories` (default `[working_directory]`), `allowed_tools`
    (default all, `sh` included; `[]` none), `exclude_patterns` (`None` the defaults
    `.env .env.* .ssh .aws *.pem *.key`, `[]` none), `timeout` seconds (10), `max_output_bytes`
    (32768), `max_read_bytes` (8 MiB), `max_entries` (10000); and `redact`, `respect_ignore_files`
    (both on). A limit left at `None` is readbox's default or what its config file says. Bad
    values raise `ValueError` here, checked by the binary itself (`readbox policy`) as well, so a
    locked config file that refuses them refuses them now. The settings in effect are attributes
    of the same names (`None` for one left out, if a locked output cap is too small for readbox
    to print its policy).
    """

    def __init__(
        self,
        working_directory: Optional[Union[str, os.PathLike[str]]] = None,
        allowed_directories: Optional[list[Union[str, os.PathLike[str]]]] = None,
        allowed_tools: Optional[list[str]] = None,
        exclude_patterns: Optional[list[str]] = None,
        timeout: Optional[float] = None,
        max_output_bytes: Optional[int] = None,
        max_read_bytes: Optional[int] = None,
        max_entries: Optional[int] = None,
        *,
        redact: Optional[bool] = None,
        respect_ignore_files: Optional[bool] = None,
        tool_filter: Optional[Union[ToolPredicate, list[str]]] = None,
        tool_name_prefix: Optional[str] = None,
    ):
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self._policy = Policy(
            working_directory,
            allowed_directories,
            allowed_tools,
            exclude_patterns,
            timeout,
            max_output_bytes,
            max_read_bytes,
            max_entries,
            redact=redact,
            respect_ignore_files=respect_ignore_files,
        )
        # The binary checks the arguments as they are (a lock may refuse them); the settings are
        # then read without the output cap, which is meant for the tools' answers. A locked cap
        # too small for the policy document leaves the settings that were not given unknown.
        backstop = self._policy.settings["timeout"] or 10.0
        env = run_argv(self._policy, ["policy"], backstop)
        if env["error"] is not None:
            raise ValueError(env["error"])
        if env["truncated"]:
            env = run_argv(self._policy, ["policy"], backstop, uncapped=True)
        given = dict(self._policy.settings)
        if not env["truncated"]:
            doc = _document(env, "policy")["settings"]
            given = {k: doc[k]["value"] if v is None else v for k, v in given.items()}
            given["max_output_bytes"] = (
                self._policy.settings["max_output_bytes"] or doc["max_output_bytes"]["value"]
            )
        self.working_directory: str = given["working_directory"]
        self.allowed_directories: Optional[list[str]] = _list(given["allowed_directories"])
        self.allowed_tools: Optional[list[str]] = _list(given["allowed_tools"])
        self.exclude_patterns: Optional[list[str]] = _list(given["exclude_patterns"])
        self.timeout: Optional[float] = given["timeout"]
        self.max_output_bytes: Optional[int] = given["max_output_bytes"]
        self.max_read_bytes: Optional[int] = given["max_read_bytes"]
        self.max_entries: Optional[int] = given["max_entries"]
        self.redact: Optional[bool] = given["redact"]
        self.respect_ignore_files: Optional[bool] = given["respect_ignore_files"]
        self._tools: Optional[list[ReadboxTool]] = None

    async def get_tools(self, readonly_context: Optional[ReadonlyContext] = None) -> list[BaseTool]:
        if self._tools is None:
            env = await run_argv_async(self._policy, ["schema"], self.timeout, uncapped=True)
            if not env["truncated"]:
                definitions = _document(env, "schema")
            else:
                # A locked output cap below the whole schema: one tool at a time.
                definitions = []
                for name in schema_tools(self._policy):
                    one = self._policy.with_tools((name,))
                    env = await run_argv_async(one, ["schema"], self.timeout, uncapped=True)
                    definitions += _definition(env)
            self._tools = [ReadboxTool(self, d) for d in definitions]
        return [t for t in self._tools if self._is_tool_selected(t, readonly_context)]

    async def _call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            return await run_async(self._policy, tool, args, self.timeout)
        except ReadboxError as e:
            # An agent gets an answer it can read rather than an exception in its loop.
            return {"output": "", "error": f"io: {e}", "truncated": False}

    # BashToolset's methods, with its signatures and defaults; each answers the envelope dict.

    async def cat(self, path: str, from_line: int = 1) -> dict[str, Any]:
        """The file's content from line FROM_LINE on."""
        return await self._call("cat", {"path": path, "from_line": from_line})

    async def pwd(self) -> dict[str, Any]:
        """The working directory."""
        return await self._call("pwd", {})

    async def ls(self, path: str = ".", show_hidden: bool = False) -> dict[str, Any]:
        """The directory's entries, one per line, sorted; `dir/`, `link@`."""
        return await self._call("ls", {"path": path, "show_hidden": show_hidden})

    async def find(
        self, path: str = ".", pattern: str = "*", file_type: str = "all", max_depth: int = 20
    ) -> dict[str, Any]:
        """Entries below PATH whose name matches the glob PATTERN."""
        return await self._call(
            "find",
            {"path": path, "pattern": pattern, "file_type": file_type, "max_depth": max_depth},
        )

    async def grep(
        self,
        pattern: str,
        path: str = ".",
        recursive: bool = True,
        ignore_case: bool = False,
        file_pattern: str = "*",
        max_depth: int = 20,
    ) -> dict[str, Any]:
        """`path:line:text` for the lines that contain PATTERN literally."""
        return await self._call(
            "grep",
            {
                "pattern": pattern,
                "path": path,
                "recursive": recursive,
                "ignore_case": ignore_case,
                "file_pattern": file_pattern,
                "max_depth": max_depth,
            },
        )

    async def head(self, path: str, lines: int = 10) -> dict[str, Any]:
        """The first LINES lines."""
        return await self._call("head", {"path": path, "lines": lines})

    async def tail(self, path: str, lines: int = 10) -> dict[str, Any]:
        """The last LINES lines."""
        return await self._call("tail", {"path": path, "lines": lines})

    async def wc(self, path: str) -> dict[str, Any]:
        """`{"lines": L, "words": W, "bytes": B}` as text in `output`."""
        return await self._call("wc", {"path": path})

    async def stat(self, path: str) -> dict[str, Any]:
        """`{"path", "type", "size_bytes", "permissions", "modified_at"}` as text in `output`."""
        return await self._call("stat", {"path": path})

    async def diff(self, path_a: str, path_b: str, context_lines: int = 3) -> dict[str, Any]:
        """A unified diff of the two files."""
        return await self._call(
            "diff", {"path_a": path_a, "path_b": path_b, "context_lines": context_lines}
        )

    async def sh(self, command: str) -> dict[str, Any]:
        """One command line through `readbox sh`."""
        return await self._call("sh", {"command": command})


def _list(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _json_schema_declarations() -> bool:
    try:
        from google.adk.features import FeatureName, is_feature_enabled
    except ImportError:
        return False
    return is_feature_enabled(FeatureName.JSON_SCHEMA_FOR_FUNC_DECL)
