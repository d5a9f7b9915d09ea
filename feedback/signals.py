"""What the feedback app tells the apps built on it, without importing them."""

from django.dispatch import Signal

# Sent by the vote (`feedback_submit`) inside its transaction, after the event is stored, so what a
# receiver writes commits or rolls back with the vote. Arguments: `session` (pk, project_id and
# feedback as stored now) and `value` (the vote's feedback value).
feedback_recorded = Signal()
