"""The stepper's panes. Each takes a Frame and draws it; none holds engine state."""
