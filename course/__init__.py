"""The course's own machinery, beside the library it teaches: ``course.grader`` grades the
exercises (``from course.grader import grade_rope``) and holds ``cmp``, the lessons' one-line
comparison. ``minilm/`` is the science; nothing in it imports this package."""
