"""Write services of the feedback app; import them from here."""

from feedback.services.submission import FeedbackResult, feedback_submit, feedback_submit_useful_known_case

__all__ = ["FeedbackResult", "feedback_submit", "feedback_submit_useful_known_case"]
