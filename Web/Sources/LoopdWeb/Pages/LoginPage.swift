/// `/login`: the operator's password. The form carries a token that is
/// also in a short-lived cookie, so another site cannot log a browser in.
enum LoginPage {
    static func page(context: PageContext, loginToken: String, returnTo: String, message: String?) -> HTML {
        let error: HTML = message.map { "<p class=\"error\" role=\"alert\">\($0)</p>" } ?? ""
        let body: HTML = """
            \(error)<form method="post" action="/login" class="login">\
            <input type="hidden" name="csrf" value="\(loginToken)">\
            <input type="hidden" name="return" value="\(returnTo)">\
            <label for="password">Password</label>\
            <input id="password" name="password" type="password" autocomplete="current-password" required autofocus>\
            <button type="submit">Log in</button></form>\
            <p>Logged in, you can cancel and retry jobs, switch a worker's mode and pause, resume or run a schedule.</p>
            """
        return Layout.page(title: "Log in", context: context, heading: "Log in", live: nil, static: body)
    }
}
