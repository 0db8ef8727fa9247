"""The teacher model (all-MiniLM-L6-v2, optional extra ``parabit[teacher]``) and what parabit distils from it:
static word vectors (:mod:`parabit.teacher.vectors`) and pair similarities (the ``teacher`` filter)."""

from parabit.teacher.model import (INSTALL_HINT, TEACHER_DIM, TEACHER_NAME, TeacherEncoder, load_teacher,
                                   require_teacher, teacher_encode, teacher_id)

__all__ = ["INSTALL_HINT", "TEACHER_DIM", "TEACHER_NAME", "TeacherEncoder", "load_teacher", "require_teacher",
           "teacher_encode", "teacher_id"]
