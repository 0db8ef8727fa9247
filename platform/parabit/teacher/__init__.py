"""The teacher model (all-MiniLM-L6-v2, optional extra ``parabit[teacher]``) and what parabit distils from it:
static word vectors (:mod:`parabit.teacher.vectors`), pair similarities (the ``teacher`` filter) and the sentence
vectors a transformer student is fitted to (recipe ``transformer``), each many texts at once through Ray Data
(:mod:`parabit.teacher.inference`). Its packaged folder (:func:`packaged_checkpoint`) is also the transformer
student's default start."""

from parabit.teacher.model import (INSTALL_HINT, TEACHER_DIM, TEACHER_NAME, TeacherEncoder, load_teacher,
                                   packaged_checkpoint, require_teacher, teacher_encode, teacher_id)

__all__ = ["INSTALL_HINT", "TEACHER_DIM", "TEACHER_NAME", "TeacherEncoder", "load_teacher", "packaged_checkpoint",
           "require_teacher", "teacher_encode", "teacher_id"]
