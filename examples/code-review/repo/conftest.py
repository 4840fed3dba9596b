# pytest puts this folder on sys.path, so the tests import `inventory`.
