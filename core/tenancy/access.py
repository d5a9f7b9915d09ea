"""Who may see which project's data: the one access rule every API, selector and admin list applies.

A machine client's API key sees its own project; a staff user holding the data permission of what
they ask for sees every project; anyone else sees nothing. Querysets of tenant models apply it with
`.visible_to(access)` (see `TenantQuerySet`).
"""

from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import models


@dataclass(frozen=True, slots=True)
class Access:
    """One project (`project_id`), every project (`all_projects`), or nothing (neither)."""

    project_id: int | None = None
    all_projects: bool = False

    @classmethod
    def to_project(cls, project_id: int) -> "Access":
        return cls(project_id=project_id)

    @classmethod
    def to_everything(cls) -> "Access":
        return cls(all_projects=True)

    @classmethod
    def to_nothing(cls) -> "Access":
        return cls()

    @classmethod
    def for_user(cls, user: AbstractBaseUser | AnonymousUser, *, permission: str) -> "Access":
        """Staff see every project's data when they hold `permission` (e.g. `cases.view_case`).

        Being staff opens the admin, not the data: a staff user holding only, say, the thresholds
        permission sees no session.
        """
        if user.is_authenticated and user.is_staff and user.has_perm(permission):
            return cls.to_everything()
        return cls.to_nothing()

    @property
    def sees_nothing(self) -> bool:
        return not self.all_projects and self.project_id is None


class TenantQuerySet(models.QuerySet):
    """Rows that belong to a project; `project_lookup` is the path from the row to its project's id."""

    project_lookup = "project_id"

    def visible_to(self, access: Access) -> "TenantQuerySet":
        if access.all_projects:
            return self
        if access.project_id is None:
            return self.none()
        return self.filter(**{self.project_lookup: access.project_id})

    @classmethod
    def through(cls, project_lookup: str) -> type["TenantQuerySet"]:
        """A queryset class for rows that reach their project through a relation, e.g. `session__project_id`."""
        return type(f"TenantQuerySetThrough_{project_lookup}", (cls,), {"project_lookup": project_lookup})
