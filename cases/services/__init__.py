"""Write services of the cases app; import them from here."""

from cases.services.bad_cases import (
    bad_case_open_for_session,
    bad_case_record_miscitation,
    bad_case_update,
    bad_case_update_errors,
)
from cases.services.library import (
    case_approve,
    case_create_from_session,
    case_create_manual,
    case_fields_clean,
    case_reject,
    case_update,
    cases_merge,
)

__all__ = [
    "bad_case_open_for_session",
    "bad_case_record_miscitation",
    "bad_case_update",
    "bad_case_update_errors",
    "case_approve",
    "case_create_from_session",
    "case_create_manual",
    "case_fields_clean",
    "case_reject",
    "case_update",
    "cases_merge",
]
