"""What the book needs beyond the library: exercise checks and the committed results.

- :mod:`~mlmcourse.course.exercises`: :func:`check` and :func:`grade`, the chapters' exercises;
- :mod:`~mlmcourse.course.results`: the measured results of long runs, shipped with the
  package so a chapter opened in Colab shows them.
"""
