"""A scripted Harbor agent that improves its workspace in steps, for checkpoint tests.

Harbor imports it by path (``harbor run -a improving_agent:ImprovingAgent`` with this
folder on PYTHONPATH). ``$RECON_IMPROVING_STAGES`` names a folder of ``1.py``, ``2.py``,
... : the agent writes each in turn to /app/workspace/reconstruct.py, as the task's agent
user, and waits ``$RECON_IMPROVING_PAUSE`` seconds after each. It also records whether it
can see the checkpoints (it must not) in /logs/agent/probe.txt.
"""
from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext


class ImprovingAgent(BaseAgent):
    @staticmethod
    def name() -> str:
        return "recon-improving"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return None

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        stages = sorted(Path(os.environ["RECON_IMPROVING_STAGES"]).glob("*.py"), key=lambda p: int(p.stem))
        pause = float(os.environ.get("RECON_IMPROVING_PAUSE", "8"))
        await environment.exec(
            "{ ls -la /checkpoints; ls /workspace; cat /proc/mounts; } > /logs/agent/probe.txt 2>&1; true")
        for stage in stages:
            blob = base64.b64encode(stage.read_bytes()).decode()
            await environment.exec(f"echo {blob} | base64 -d > /app/workspace/reconstruct.py")
            await asyncio.sleep(pause)
