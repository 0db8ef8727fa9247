"""Recipe ``transformer``: a Hugging Face checkpoint trained from bitext in the kernel (see :mod:`.recipe`)."""
