"""The scenario library in the app: the Library dock, its dialogs, and the session that ties
one open library to the main window (`ui.library.session.LibrarySession`)."""
