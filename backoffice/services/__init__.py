"""What the back office writes of its own: who works on which session (`sharing`)."""
