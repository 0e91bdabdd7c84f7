"""The error a service raises to explain a failure itself; its own module so that parameter checking
(``dagsmith_kit.params``) and running a service (``dagsmith_kit.service``) can both raise it."""


class ServiceError(Exception):
    """A failure the service explains itself (bad parameter, unusable data); printed without a traceback."""
