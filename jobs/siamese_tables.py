"""Print Bao et al.'s Table I and Table II from the Siamese runs in MLflow: ``python jobs/siamese_tables.py``."""

from parabit.supervised.tables import finished_runs, table_one, table_two

if __name__ == "__main__":
    runs = finished_runs()
    print("Table I (test; MSE on the [0, 1] scale)\n" + table_one(runs))
    print("\nTable II (SICK EN test Pearson r by maximum sentence length)\n" + table_two(runs))
