Buenos días .
Gracias .
