"""Reads of the read model for the gateway and the CLI (`berth get`, `berth describe`).

Rows come back as the same structs the fold produces (`shared.projection.rows`). Stub rows (events
about a pod whose PodSubmitted the projector has not applied yet) have no name and are left out of
listings.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.projection import (
    AttemptRow,
    BindingRow,
    NamespaceRow,
    NodeRow,
    PdbRow,
    PodRow,
    PodState,
    PreemptionRow,
    PriorityClassRow,
)

from .engine import translated_errors
from .models import (
    AttemptModel,
    BindingModel,
    NamespaceModel,
    NodeModel,
    PdbModel,
    PodModel,
    PreemptionModel,
    PriorityClassModel,
)
from .projection_store import record_to_row


class ReadModelQueries:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def _rows(self, table: str, stmt: Select[Any]) -> list[Any]:
        with translated_errors(f"reading {table}"):
            async with self._engine.connect() as conn:
                return [record_to_row(table, r) for r in (await conn.execute(stmt)).all()]

    async def nodes(self) -> list[NodeRow]:
        return await self._rows("nodes", select(NodeModel.__table__).order_by(NodeModel.name))

    async def node(self, name: str) -> NodeRow | None:
        rows = await self._rows("nodes", select(NodeModel.__table__).where(NodeModel.name == name))
        return rows[0] if rows else None

    async def pods(self, namespace: str | None = None, *, include_deleted: bool = False) -> list[PodRow]:
        table = PodModel.__table__
        stmt = select(table).where(PodModel.name != "")
        if namespace is not None:
            stmt = stmt.where(PodModel.namespace == namespace)
        if not include_deleted:
            stmt = stmt.where(PodModel.deleted.is_(False))
        return await self._rows("pods", stmt.order_by(PodModel.namespace, PodModel.name, PodModel.uid))

    async def pod_states(self) -> list[PodState]:
        """Every named pod's scheduling state, without its spec (cheap to read for thousands)."""
        c = PodModel.__table__.c
        stmt = select(c.uid, c.namespace, c.name, c.node_name, c.message, c.deleted, c.preempted_by,
                      c.phase).where(c.name != "")
        with translated_errors("reading pods"):
            async with self._engine.connect() as conn:
                return [PodState(*r) for r in (await conn.execute(stmt)).all()]

    async def pods_by_uid(self, uids: Sequence[str]) -> list[PodRow]:
        if not uids:
            return []
        return await self._rows("pods", select(PodModel.__table__).where(PodModel.uid.in_(list(uids))))

    async def node_versions(self) -> dict[str, datetime]:
        """Each node's name and when its row last changed."""
        with translated_errors("reading nodes"):
            async with self._engine.connect() as conn:
                rows = (await conn.execute(select(NodeModel.name, NodeModel.updated_at))).all()
        return {r[0]: r[1] for r in rows}

    async def nodes_by_name(self, names: Sequence[str]) -> list[NodeRow]:
        if not names:
            return []
        return await self._rows("nodes", select(NodeModel.__table__).where(NodeModel.name.in_(list(names))))

    async def pod(self, namespace: str, name: str) -> PodRow | None:
        """The live pod of that name, else the most recently submitted deleted one."""
        stmt = (
            select(PodModel.__table__)
            .where(PodModel.namespace == namespace, PodModel.name == name)
            .order_by(PodModel.deleted, PodModel.submitted_at.desc().nulls_last())
        )
        rows = await self._rows("pods", stmt)
        return rows[0] if rows else None

    async def pod_by_uid(self, uid: str) -> PodRow | None:
        rows = await self._rows("pods", select(PodModel.__table__).where(PodModel.uid == uid))
        return rows[0] if rows else None

    async def attempts(self, pod_uid: str) -> list[AttemptRow]:
        stmt = select(AttemptModel.__table__).where(AttemptModel.pod_uid == pod_uid).order_by(AttemptModel.attempt)
        return await self._rows("attempts", stmt)

    async def bindings(self, pod_uid: str) -> list[BindingRow]:
        stmt = (
            select(BindingModel.__table__)
            .where(BindingModel.pod_uid == pod_uid)
            .order_by(BindingModel.requested_at.nulls_last(), BindingModel.attempt_id)
        )
        return await self._rows("bindings", stmt)

    async def preemptions(self, preemptor_uid: str) -> list[PreemptionRow]:
        stmt = (
            select(PreemptionModel.__table__)
            .where(PreemptionModel.preemptor_uid == preemptor_uid)
            .order_by(PreemptionModel.decided_at)
        )
        return await self._rows("preemptions", stmt)

    async def namespaces(self) -> list[NamespaceRow]:
        stmt = select(NamespaceModel.__table__).order_by(NamespaceModel.name)
        return await self._rows("namespaces", stmt)

    async def priority_classes(self) -> list[PriorityClassRow]:
        stmt = select(PriorityClassModel.__table__).order_by(PriorityClassModel.name)
        return await self._rows("priority_classes", stmt)

    async def pdbs(self, namespace: str | None = None) -> list[PdbRow]:
        stmt = select(PdbModel.__table__)
        if namespace is not None:
            stmt = stmt.where(PdbModel.namespace == namespace)
        return await self._rows("pdbs", stmt.order_by(PdbModel.namespace, PdbModel.name))
