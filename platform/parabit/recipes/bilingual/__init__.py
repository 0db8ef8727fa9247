"""Recipe ``bilingual``: one English–Spanish space from an English averaging model (see :mod:`.recipe`)."""
